/**
 * What the code under test writes to stdout, test by test: called in a describe block, it replaces
 * `process.stdout.write` before each test and puts it back after. `stdout.text` is what the running
 * test wrote so far; `stdout.clear()` starts again.
 */
export function captureStdout(): { text: string; clear(): void } {
  const write = process.stdout.write.bind(process.stdout);
  const captured = {
    text: '',
    clear() {
      captured.text = '';
    },
  };
  beforeEach(() => {
    captured.clear();
    process.stdout.write = (chunk: string) => {
      captured.text += chunk;
      return true;
    };
  });
  afterEach(() => {
    process.stdout.write = write;
  });
  return captured;
}
