import DataModel

extension JSONWriter {
    /// Writes data as a client sends it: export format (data-model.md §4.2) with each server-value placeholder
    /// written back as `{".sv":…}` (wire-protocol.md §9), so that parsing the output gives `value` again.
    mutating func writeClientData(_ value: WriteValue) {
        guard !value.serverValues.isEmpty else {
            writeExport(value.node)
            return
        }
        var marks: [Path: (value: ServerValue?, priority: ServerValue?)] = [:]
        for placeholder in value.serverValues {
            if placeholder.isPriority {
                marks[placeholder.path, default: (nil, nil)].priority = placeholder.value
            } else {
                marks[placeholder.path, default: (nil, nil)].value = placeholder.value
            }
        }
        writeClientNode(value.node, at: .root, marks: marks)
    }

    private mutating func writeClientNode(
        _ node: Node, at path: Path, marks: [Path: (value: ServerValue?, priority: ServerValue?)]
    ) {
        let mark = marks[path]
        if let serverValue = mark?.value {
            writeASCII("{\".sv\":")
            writeServerValue(serverValue)
            writeClientPriority(node.priority, placeholder: mark?.priority)
            closeObject()
            return
        }
        let hasPriority = node.priority != nil || mark?.priority != nil
        if node.isLeaf {
            guard hasPriority else {
                writeExport(node)
                return
            }
            writeASCII("{\".value\":")
            writeExport(node.withoutPriority)
            writeClientPriority(node.priority, placeholder: mark?.priority)
            closeObject()
            return
        }
        guard node.hasChildren else {
            writeASCII("null")
            return
        }
        writeASCII("{")
        var first = true
        for entry in node.children {
            writeKey(entry.key.string, first: first)
            first = false
            writeClientNode(entry.node, at: path.child(entry.key), marks: marks)
        }
        writeClientPriority(node.priority, placeholder: mark?.priority)
        closeObject()
    }

    /// Writes `,".priority":P` when there is a priority or a priority placeholder.
    private mutating func writeClientPriority(_ priority: Priority?, placeholder: ServerValue?) {
        if let placeholder {
            writeASCII(",\".priority\":")
            writeServerValue(placeholder)
        } else if let priority {
            writeASCII(",\".priority\":")
            switch priority {
            case .number(let number): writeNumber(number)
            case .string(let text): writeString(text)
            }
        }
    }

    /// Writes the payload of a `.sv` member: `"timestamp"` or `{"increment":n}`.
    private mutating func writeServerValue(_ value: ServerValue) {
        switch value {
        case .timestamp: writeASCII("\"timestamp\"")
        case .increment(let delta):
            writeASCII("{\"increment\":")
            writeNumber(delta)
            closeObject()
        }
    }
}
