import HTTP1

/// The JavaScript (and the one HTML page) the long-poll transport answers with (long-polling.md §2, §4, §5, §6).
///
/// Every value written into a script is either a number, a wire message's JSON (which is valid JavaScript), or an
/// id, password or callback number of `[A-Za-z0-9]`, so nothing a client sends can end up as code.
enum LongPollScript {
    /// The start answer's preamble: the iframe's two callbacks, forwarding to the page's numbered ones, and the
    /// start command.
    static func startPreamble(callback: String?, id: String, password: String) -> [UInt8] {
        var script = ""
        if let callback {
            script += "function pLPCommand(c,a1,a2,a3,a4){parent.pLPCommand\(callback)(c,a1,a2,a3,a4);}\n"
            script += "function pRTLPCB(pN,data){parent.pRTLPCB\(callback)(pN,data);}\n"
        }
        script += "pLPCommand('start','\(id)','\(password)');\n"
        return Array(script.utf8)
    }

    /// `pRTLPCB(<number>,[<message>,…]);`, appended to `script`.
    static func appendMessages(_ messages: ArraySlice<[UInt8]>, number: Int, to script: inout [UInt8]) {
        script += Array("pRTLPCB(\(number),[".utf8)
        for (index, message) in messages.enumerated() {
            if index > 0 { script.append(UInt8(ascii: ",")) }
            script += message
        }
        script += Array("]);\n".utf8)
    }

    /// The close command: the page runs answers up to `lastNumber`, then closes the transport.
    static func closeCommand(lastNumber: Int) -> [UInt8] {
        Array("pLPCommand('close',\(lastNumber));\n".utf8)
    }

    /// An answer carrying `script`.
    static func response(_ script: [UInt8], status: HTTPStatus = .ok) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "text/javascript; charset=utf-8")
        headers.add(name: "Cache-Control", value: "no-store")
        return HTTPResponse(status: status, headers: headers, body: script)
    }

    /// A refused request: the status, and the reason as a script comment (a script tag fails on the status).
    static func refusal(_ status: HTTPStatus, _ reason: String) -> HTTPResponse {
        // Printable ASCII without `*`, so the comment cannot end early whatever the reason quotes.
        let comment = reason.utf8.filter { $0 >= 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "*") }
        return response(Array("/* ".utf8) + comment + Array(" */\n".utf8), status: status)
    }

    /// The disconnect frame (§6): when the page unloads it, it tells the server the session is over.
    static func disconnectFrame(id: String, password: String) -> HTTPResponse {
        let url = "/.lp?disconn=t&id=\(id)&pw=\(password)"
        let page = """
            <!DOCTYPE html><html><head><meta charset="utf-8"><title>Canopy long-poll session</title></head><body><script>
            var sent = false;
            function leave() {
              if (sent) return;
              sent = true;
              if (navigator.sendBeacon && navigator.sendBeacon('\(url)')) return;
              var request = new XMLHttpRequest();
              request.open('GET', '\(url)', false);
              try { request.send(); } catch (e) {}
            }
            window.addEventListener('pagehide', leave);
            window.addEventListener('unload', leave);
            </script></body></html>

            """
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "text/html; charset=utf-8")
        headers.add(name: "Cache-Control", value: "no-store")
        return HTTPResponse(status: .ok, headers: headers, body: Array(page.utf8))
    }
}
