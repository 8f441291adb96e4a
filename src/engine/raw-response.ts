/**
 * A response as a person pastes it: the text `curl -i` prints, or a browser's "copy response
 * headers" with the status line above. Read into classify's response shape, so that `explain` and
 * the Explain Throttle Response action take what a support engineer has in hand, not only JSON.
 *
 * The message syntax is RFC 9112's (https://www.rfc-editor.org/rfc/rfc9112#section-2.1): a status
 * line, header field lines up to an empty line, then the body. What a paste adds is read leniently:
 * bare LF line ends (§2.2 lets a recipient accept them), HTTP/2's "HTTP/2 429" status line as curl
 * prints it, and several responses in one paste (curl -iL follows redirects; a 100 Continue or a
 * proxy's "200 Connection established" comes first): the last one is the answer. A field line
 * folded onto the next with leading white space (obs-fold, §5.2) is joined with one space; a field
 * named twice is joined with ", " as RFC 9110 §5.3 combines them.
 */
export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  /** The body: parsed JSON where it is JSON, else the text; undefined when there is none. */
  body: unknown;
}

const STATUS_LINE = /^HTTP\/\d(?:\.\d)?[ \t]+(\d{3})(?:[ \t].*)?$/;
/** A field name is a token (RFC 9110 §5.1, §5.6.2). */
const FIELD_LINE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+)[ \t]*:[ \t]*(.*?)[ \t]*$/;

/** Whether text looks like a pasted HTTP response (its first line a status line) rather than JSON. */
export function looksLikeRawResponse(text: string): boolean {
  return STATUS_LINE.test(text.trimStart().split(/\r?\n/, 1)[0] ?? "");
}

/** The index of the status line that starts the last response in the paste (the first line, or one after an empty line), or -1. */
function lastStatusLine(lines: readonly string[]): number {
  let found = -1;
  for (const [index, line] of lines.entries()) if ((index === 0 || lines[index - 1] === "") && STATUS_LINE.test(line)) found = index;
  return found;
}

/** A pasted response's body: JSON where it parses as JSON, else the text as it is. */
function bodyOf(text: string): unknown {
  const trimmed = text.trim();
  if (trimmed === "") return undefined;
  if (trimmed.startsWith("{") || trimmed.startsWith("[")) {
    try {
      return JSON.parse(trimmed) as unknown;
    } catch {
      return trimmed;
    }
  }
  return trimmed;
}

/**
 * Header field lines ("Name: value", one a line) into an object. Returns an error saying which line
 * is not one. Used for a whole response's header block and for an action's Headers input given so.
 */
export function parseHeaderLines(lines: readonly string[], firstLineNumber = 1): { headers: Record<string, string> } | { error: string } {
  const headers: Record<string, string> = {};
  let last: string | null = null;
  for (const [offset, line] of lines.entries()) {
    if (line.trim() === "") continue;
    if (/^[ \t]/.test(line) && last !== null) {
      headers[last] = `${headers[last]} ${line.trim()}`.trim();
      continue;
    }
    const field = FIELD_LINE.exec(line);
    if (!field) return { error: `line ${firstLineNumber + offset} is not a header line "Name: value": ${JSON.stringify(line.slice(0, 60))}` };
    const name = field[1]!.toLowerCase();
    headers[name] = headers[name] === undefined ? field[2]! : `${headers[name]}, ${field[2]!}`;
    last = name;
  }
  return { headers };
}

/** Reads a pasted response; returns it, or an error that says what is wrong, in one line. */
export function parseRawResponse(text: string): RawResponse | { error: string } {
  // trimStart drops a byte order mark too: U+FEFF is white space to ECMAScript (§12.2).
  const lines = text.trimStart().split(/\r?\n/);
  const start = lastStatusLine(lines);
  if (start === -1) return { error: 'no status line: a pasted response starts like "HTTP/1.1 429 Too Many Requests"' };
  const status = Number(STATUS_LINE.exec(lines[start]!)![1]);
  if (status < 100 || status > 599) return { error: `status ${status} is not an HTTP status (100 to 599)` };
  let end = start + 1;
  while (end < lines.length && lines[end] !== "") end++;
  const read = parseHeaderLines(lines.slice(start + 1, end), start + 2);
  if ("error" in read) return read;
  return { status, headers: read.headers, body: bodyOf(lines.slice(end + 1).join("\n")) };
}

/** Header lines given as text ("Name: value" a line) as an object, or null where the text is not such lines. */
export function headerLinesOf(text: string): Record<string, string> | null {
  const lines = text.split(/\r?\n/).filter((line) => line.trim() !== "");
  if (lines.length === 0 || !lines.every((line) => FIELD_LINE.test(line) || /^[ \t]/.test(line))) return null;
  const read = parseHeaderLines(lines);
  return "error" in read ? null : read.headers;
}
