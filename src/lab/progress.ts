/** A one-line progress indicator on stderr: rewritten in place on a terminal, a line per step otherwise. */
export function createProgress(stream: NodeJS.WriteStream = process.stderr): { update(text: string): void; done(): void } {
  let last = "";
  return {
    update(text) {
      if (stream.isTTY) {
        stream.write(`\r${text.padEnd(last.length)}`);
      } else {
        stream.write(`${text}\n`);
      }
      last = text;
    },
    done() {
      if (stream.isTTY && last) stream.write(`\r${" ".repeat(last.length)}\r`);
      last = "";
    },
  };
}
