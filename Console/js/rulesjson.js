// Rules files are JSON with `//` and `/* */` comments and raw newlines inside strings (security-rules §2). This
// parser reads them and remembers where each key and value is, so a line and column the server reports about one
// text (the published rules, or its own copy of rules sent as JSON) can be moved to the same rule in the editor.

export class RulesSyntaxError extends Error {
  constructor(message, line, column) {
    super(message);
    this.line = line;
    this.column = column;
  }
}

/** 1-based line and column of a character offset. */
export function positionAt(text, offset) {
  let line = 1;
  let start = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line += 1;
    start = i + 1;
  }
  return { line, column: offset - start + 1 };
}

/** Character offset of a 1-based line and column (clamped to the text and to the line). */
export function offsetAt(text, line, column = 1) {
  let start = 0;
  for (let n = 1; n < line; n += 1) {
    const next = text.indexOf('\n', start);
    if (next === -1) return text.length;
    start = next + 1;
  }
  let end = text.indexOf('\n', start);
  if (end === -1) end = text.length;
  return Math.min(start + Math.max(0, column - 1), end);
}

const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const ESCAPES = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

/**
 * Parses a rules text. Returns { value, spans }: each span is { path, kind: 'key'|'value', start, end } (character
 * offsets, end exclusive), `path` the keys from the top joined by '/' ("/rules/rooms/$room/.write"). Throws a
 * RulesSyntaxError at the first problem.
 */
export function parseRules(text) {
  let i = 0;
  const spans = [];
  const fail = (message, at = i) => {
    const { line, column } = positionAt(text, at);
    throw new RulesSyntaxError(message, line, column);
  };

  function space() {
    for (;;) {
      const c = text[i];
      if (c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\uFEFF') i += 1;
      else if (c === '/' && text[i + 1] === '/') {
        while (i < text.length && text[i] !== '\n') i += 1;
      } else if (c === '/' && text[i + 1] === '*') {
        const end = text.indexOf('*/', i + 2);
        if (end === -1) fail('unterminated comment');
        i = end + 2;
      } else return;
    }
  }

  function string() {
    const start = i;
    i += 1;
    let result = '';
    for (;;) {
      if (i >= text.length) fail('unterminated string', start);
      const c = text[i];
      if (c === '"') {
        i += 1;
        return result;
      }
      if (c === '\\') {
        const e = text[i + 1];
        if (e === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) {
          result += String.fromCharCode(parseInt(text.slice(i + 2, i + 6), 16));
          i += 6;
        } else if (e in ESCAPES) {
          result += ESCAPES[e];
          i += 2;
        } else fail('invalid escape in a string');
      } else {
        result += c;
        i += 1;
      }
    }
  }

  function value(path) {
    space();
    const start = i;
    let result;
    const c = text[i];
    if (c === '{') result = object(path);
    else if (c === '[') result = array(path);
    else if (c === '"') result = string();
    else if (text.startsWith('true', i)) [result, i] = [true, i + 4];
    else if (text.startsWith('false', i)) [result, i] = [false, i + 5];
    else if (text.startsWith('null', i)) [result, i] = [null, i + 4];
    else {
      NUMBER.lastIndex = i;
      const match = NUMBER.exec(text);
      if (!match) fail(i >= text.length ? 'unexpected end of the text' : `unexpected character ${JSON.stringify(c)}`);
      result = Number(match[0]);
      i += match[0].length;
    }
    spans.push({ path, kind: 'value', start, end: i });
    return result;
  }

  function object(path) {
    i += 1;
    const result = {};
    space();
    if (text[i] === '}') {
      i += 1;
      return result;
    }
    for (;;) {
      space();
      if (text[i] !== '"') fail('expected a key in double quotes');
      const keyStart = i;
      const key = string();
      const childPath = `${path}/${key}`;
      spans.push({ path: childPath, kind: 'key', start: keyStart, end: i });
      space();
      if (text[i] !== ':') fail('expected : after the key');
      i += 1;
      result[key] = value(childPath);
      space();
      if (text[i] === ',') i += 1;
      else if (text[i] === '}') {
        i += 1;
        return result;
      } else fail('expected , or }');
    }
  }

  function array(path) {
    i += 1;
    const result = [];
    space();
    if (text[i] === ']') {
      i += 1;
      return result;
    }
    for (;;) {
      result.push(value(`${path}/${result.length}`));
      space();
      if (text[i] === ',') i += 1;
      else if (text[i] === ']') {
        i += 1;
        return result;
      } else fail('expected , or ]');
    }
  }

  const result = value('');
  space();
  if (i < text.length) fail('unexpected text after the end');
  return { value: result, spans };
}

const recentSpans = new Map(); // text → spans (or null), for the last few texts

/** The spans of a text, or null when it does not parse. */
function spansOf(text) {
  if (recentSpans.has(text)) return recentSpans.get(text);
  let spans = null;
  try {
    spans = parseRules(text).spans;
  } catch {
    // not a rules text
  }
  if (recentSpans.size >= 4) recentSpans.delete(recentSpans.keys().next().value);
  recentSpans.set(text, spans);
  return spans;
}

/**
 * A function moving a 1-based line:column of `sourceText` to `targetText`: to the same key or value (same path),
 * at the same distance from its start when that fits. It returns { line, column }, or null when there is no such
 * place (or a text does not parse).
 */
export function positionMapper(sourceText, targetText) {
  if (sourceText === targetText) return (line, column) => ({ line, column });
  const from = spansOf(sourceText);
  const to = spansOf(targetText);
  if (!from || !to) return () => null;
  return (line, column) => {
    const offset = offsetAt(sourceText, line, column);
    let best = null;
    for (const span of from) {
      if (span.start <= offset && offset <= span.end && (!best || span.end - span.start < best.end - best.start)) {
        best = span;
      }
    }
    const match = best && to.find((span) => span.path === best.path && span.kind === best.kind);
    if (!match) return null;
    const distance = offset - best.start;
    return positionAt(targetText, distance <= match.end - match.start ? match.start + distance : match.start);
  };
}

/** Where the expression of a rule ("/rooms/$room/.write") is in a rules text, or null. */
export function findRule(text, rulePath) {
  const spans = spansOf(text);
  const path = `/rules${rulePath === '/' ? '' : rulePath}`;
  const span = spans?.find((candidate) => candidate.path === path && candidate.kind === 'value');
  return span ? positionAt(text, span.start) : null;
}
