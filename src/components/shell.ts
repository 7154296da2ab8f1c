/** Shell quoting for the commands the pages print, so each runs as pasted into bash or zsh. */

/** One shell word: as it is when plain, otherwise single-quoted (a query's & would background the command, its ? glob). */
export function shellWord(word: string): string {
  return /^[\w/.:=,@+-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/** The `npm run buy` line of this repository that buys `method path` with `body` (JSON, POST only). */
export function buyCommand(method: string, path: string, body?: unknown): string {
  return `npm run buy -- ${method} ${shellWord(path)}${body === undefined ? "" : ` ${shellWord(JSON.stringify(body))}`}`;
}
