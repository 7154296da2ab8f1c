/**
 * ERC-20 transfers out of an `eth_getLogs` answer. A 2,000-block USDC chunk on Base holds tens of
 * thousands of logs, a megabyte or more of JSON; `JSON.parse` builds every field of every log
 * (block hash, timestamp, transaction index, the event's topic) and the scan then reads five of
 * them. `readTransfers` reads the answer's bytes once and builds only the transfers, for the
 * shape nodes send (a `result` array of flat log objects, hex strings without escapes), and
 * falls back to `JSON.parse` for anything else: escapes, nested values where strings belong, a
 * malformed quantity, an error. Both paths give the same transfers; test/transfer-answer.test.ts
 * checks that on real answers and on reshaped ones. On the bench chain it takes about half
 * the CPU of `JSON.parse` and the field decoding.
 */
import { isAscii } from "node:buffer";
import { type Address, getAddress, type Hash, type Hex } from "viem";

/** One decoded ERC-20 transfer. */
export interface TransferLog {
  token: Address;
  blockNumber: number;
  logIndex: number;
  txHash: Hash;
  from: Address;
  to: Address;
  value: bigint;
}

/** A log as eth_getLogs returns it (hex quantities). */
export interface RawLog {
  address: Address;
  blockNumber: Hex;
  logIndex: Hex;
  transactionHash: Hash;
  topics: Hex[];
  data: Hex;
  removed?: boolean;
}

/**
 * Checksummed addresses by their 40 hex digits: the same counterparties recur, and checksumming
 * costs a keccak. Keys are as the node wrote them (lower case in practice); a key in another
 * case is a second entry for the same address, never a wrong one. The fast reader looks digits
 * up where they lie in the answer (`at`), so a known address costs no string; the hash is
 * seeded per process, so addresses chosen to collide cannot be prepared in advance.
 */
export class AddressBook {
  readonly #max: number;
  readonly #seed = (Math.random() * 0x100000000) | 0;
  /** Open addressing by the digits' bytes: hashes, the digits (40 bytes a slot) and the addresses. */
  #hashes = new Int32Array(0);
  #digits = Buffer.alloc(0);
  #values: (Address | undefined)[] = [];
  #size = 0;

  constructor(max = 100_000) {
    this.#max = max;
    this.#reset(1024);
  }

  /** The checksummed address of 40 hex digits (any case: no checksum is checked). */
  get(hex40: string): Address {
    // Anything but 40 digits is no address: getAddress says why.
    return hex40.length === 40 ? this.at(Buffer.from(hex40, "latin1"), 0) : getAddress(`0x${hex40}`);
  }

  /** The checksummed address of the 40 hex digits at `start` in `b` (ASCII). */
  at(b: Buffer, start: number): Address {
    let h = this.#seed;
    for (let i = start; i < start + 40; i++) h = Math.imul(h ^ (b[i] as number), 0x01000193);
    const mask = this.#hashes.length - 1;
    let slot = h & mask;
    for (;;) {
      const found = this.#values[slot];
      if (found === undefined) break;
      if (this.#hashes[slot] === h && this.#sameDigits(slot, b, start)) return found;
      slot = (slot + 1) & mask;
    }
    const address = getAddress(`0x${b.toString("latin1", start, start + 40)}`);
    if (this.#size >= this.#max) this.#reset(1024);
    else if ((this.#size + 1) * 2 > this.#hashes.length) this.#grow();
    this.#place(h, b, start, address);
    return address;
  }

  /** Whether the entry in `slot` has the 40 digits at `start` in `b` (a loop: cheaper than a call to Buffer's compare for 40 bytes). */
  #sameDigits(slot: number, b: Buffer, start: number): boolean {
    const digits = this.#digits;
    const at = slot * 40;
    for (let i = 0; i < 40; i++) if (digits[at + i] !== b[start + i]) return false;
    return true;
  }

  /** An empty table of `capacity` slots (a power of two). */
  #reset(capacity: number): void {
    this.#hashes = new Int32Array(capacity);
    this.#digits = Buffer.alloc(capacity * 40);
    this.#values = new Array(capacity).fill(undefined);
    this.#size = 0;
  }

  /** Put an entry in the first free slot from its hash. */
  #place(h: number, digits: Buffer, start: number, address: Address): void {
    const mask = this.#hashes.length - 1;
    let at = h & mask;
    while (this.#values[at] !== undefined) at = (at + 1) & mask;
    this.#hashes[at] = h;
    digits.copy(this.#digits, at * 40, start, start + 40);
    this.#values[at] = address;
    this.#size++;
  }

  /** Twice the slots, every entry placed again by its hash. */
  #grow(): void {
    const [hashes, digits, values] = [this.#hashes, this.#digits, this.#values];
    this.#reset(hashes.length * 2);
    for (let old = 0; old < hashes.length; old++) {
      const value = values[old];
      if (value !== undefined) this.#place(hashes[old] as number, digits, old * 40, value);
    }
  }
}

/** The transfers of an answer, and how many logs it held (the scanner sizes later ranges by it). */
export interface Transfers {
  logs: TransferLog[];
  count: number;
}

/**
 * The transfers among `logs` (already parsed): exactly three topics and a 32-byte amount, as
 * ERC-20's Transfer has (ERC-721's indexed token id makes four); removed logs dropped.
 */
export function transfersOf(logs: readonly RawLog[], token: Address | undefined, book: AddressBook): Transfers {
  const out: TransferLog[] = [];
  for (const log of logs) {
    if (log.topics.length !== 3 || log.data.length !== 66 || log.removed) continue;
    out.push({
      token: token ?? book.get(log.address.slice(2)),
      blockNumber: Number(log.blockNumber),
      logIndex: Number(log.logIndex),
      txHash: log.transactionHash,
      from: book.get((log.topics[1] as Hex).slice(26)),
      to: book.get((log.topics[2] as Hex).slice(26)),
      value: BigInt(log.data),
    });
  }
  return { logs: out, count: logs.length };
}

/** A JSON-RPC answer that is not a list of logs (an error, or no `result` array). */
export class NotLogsError extends Error {
  readonly answer: unknown;
  constructor(answer: unknown) {
    super("the eth_getLogs answer holds no list of logs");
    this.answer = answer;
  }
}

/**
 * The transfers of a JSON-RPC `eth_getLogs` answer's bytes. An answer without a `result` array
 * throws `NotLogsError` with the parsed answer (the caller turns a JSON-RPC error into its
 * error); a body that is not JSON throws `SyntaxError`.
 */
export function readTransfers(body: Buffer, token: Address | undefined, book: AddressBook): Transfers {
  const fast = fastTransfers(body, token, book);
  if (fast) return fast;
  const answer = JSON.parse(body.toString("utf8")) as { result?: unknown };
  if (!Array.isArray(answer?.result)) throw new NotLogsError(answer);
  return transfersOf(answer.result as RawLog[], token, book);
}

/**
 * The transfers of an answer in the shape nodes send, read without `JSON.parse`; undefined for
 * any other answer (`readTransfers` then parses it).
 */
export function fastTransfers(body: Buffer, token: Address | undefined, book: AddressBook): Transfers | undefined {
  return isAscii(body) && body.indexOf(BACKSLASH) === -1 ? new FastReader(body, token, book).answer() : undefined;
}

const BACKSLASH = 0x5c;
const QUOTE = 0x22;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

/** The log fields a transfer needs, numbered. */
const ADDRESS = 1;
const TOPICS = 2;
const DATA = 3;
const BLOCK_NUMBER = 4;
const LOG_INDEX = 5;
const TRANSACTION_HASH = 6;
const REMOVED = 7;
const FIELDS: readonly [string, number][] = [
  ["address", ADDRESS],
  ["topics", TOPICS],
  ["data", DATA],
  ["blockNumber", BLOCK_NUMBER],
  ["logIndex", LOG_INDEX],
  ["transactionHash", TRANSACTION_HASH],
  ["removed", REMOVED],
];
/** The fields by the length of their names: a key is compared with at most two. */
const FIELDS_BY_LENGTH: { bytes: Buffer; id: number }[][] = [];
for (const [name, id] of FIELDS) {
  const same = FIELDS_BY_LENGTH[name.length] ?? [];
  same.push({ bytes: Buffer.from(name, "latin1"), id });
  FIELDS_BY_LENGTH[name.length] = same;
}
/** Hex digits' values by character code (-1: not a hex digit). */
const HEX = new Int8Array(256).fill(-1);
for (let c = 0; c < 10; c++) HEX[0x30 + c] = c;
for (let c = 0; c < 6; c++) {
  HEX[0x41 + c] = 10 + c;
  HEX[0x61 + c] = 10 + c;
}
const RESULT = Buffer.from("result", "latin1");

/** Thrown inside the fast reader when the answer is not in the shape it reads: `JSON.parse` takes over. */
const UNEXPECTED = Symbol("unexpected");

/**
 * Reads an answer of ASCII bytes with no backslash in it (so no string holds an escape, every
 * string ends at the next quote, and a latin1 slice is the string). Anything outside the expected shape throws `UNEXPECTED`.
 */
class FastReader {
  readonly #b: Buffer;
  readonly #token: Address | undefined;
  readonly #book: AddressBook;
  #i = 0;
  /** Where the contents of the string last read end. */
  #end = 0;

  constructor(body: Buffer, token: Address | undefined, book: AddressBook) {
    this.#b = body;
    this.#token = token;
    this.#book = book;
  }

  /** The transfers, or undefined when `JSON.parse` must read this answer. */
  answer(): Transfers | undefined {
    try {
      let transfers: Transfers | undefined;
      this.#expect(OPEN_OBJECT);
      if (this.#peek() !== CLOSE_OBJECT) {
        for (;;) {
          const start = this.#string();
          this.#expect(COLON);
          if (this.#same(start, this.#end, RESULT)) {
            if (transfers || this.#peek() !== OPEN_ARRAY) throw UNEXPECTED;
            transfers = this.#logs();
          } else this.#scalar(); // jsonrpc, id; an "error" object is not a scalar: JSON.parse reads it
          if (this.#peek() === COMMA) this.#i++;
          else break;
        }
      }
      this.#expect(CLOSE_OBJECT);
      if (this.#peek() !== -1) throw UNEXPECTED;
      return transfers;
    } catch (error) {
      if (error === UNEXPECTED) return undefined;
      throw error;
    }
  }

  #logs(): Transfers {
    const out: TransferLog[] = [];
    let count = 0;
    this.#expect(OPEN_ARRAY);
    if (this.#peek() === CLOSE_ARRAY) {
      this.#i++;
      return { logs: out, count };
    }
    for (;;) {
      count++;
      const log = this.#log();
      if (log) out.push(log);
      const next = this.#peek();
      this.#i++;
      if (next === CLOSE_ARRAY) return { logs: out, count };
      if (next !== COMMA) throw UNEXPECTED;
    }
  }

  /** One log object; undefined when it is not an ERC-20 transfer (as `transfersOf` decides). */
  #log(): TransferLog | undefined {
    const b = this.#b;
    let address = -1;
    let data = -1;
    let dataEnd = -1;
    let blockNumber = -1;
    let logIndex = -1;
    let txHash: string | undefined;
    let topics = 0;
    let from = -1;
    let to = -1;
    let removed = false;
    let seen = 0;
    this.#expect(OPEN_OBJECT);
    if (this.#peek() !== CLOSE_OBJECT) {
      for (;;) {
        const start = this.#string();
        this.#expect(COLON);
        const field = this.#field(start, this.#end);
        if (field !== 0) {
          if (seen & (1 << field)) throw UNEXPECTED; // a repeated key: JSON.parse keeps the last
          seen |= 1 << field;
        }
        if (field === TOPICS) {
          this.#expect(OPEN_ARRAY);
          if (this.#peek() === CLOSE_ARRAY) this.#i++;
          else {
            for (;;) {
              const s = this.#string();
              if (topics === 1) from = this.#topicAddress(s, this.#end);
              else if (topics === 2) to = this.#topicAddress(s, this.#end);
              topics++;
              const next = this.#peek();
              this.#i++;
              if (next === CLOSE_ARRAY) break;
              if (next !== COMMA) throw UNEXPECTED;
            }
          }
        } else if (field === REMOVED) {
          removed = this.#boolean();
        } else if (field === 0) {
          this.#scalar();
        } else {
          const s = this.#string();
          const e = this.#end;
          if (field === ADDRESS) {
            if (e - s !== 42 || b[s] !== 0x30 || b[s + 1] !== 0x78) throw UNEXPECTED;
            address = s + 2;
          } else if (field === DATA) {
            data = s;
            dataEnd = e;
          } else if (field === BLOCK_NUMBER) blockNumber = this.#quantity(s, e);
          else if (field === LOG_INDEX) logIndex = this.#quantity(s, e);
          else {
            if (e - s !== 66 || b[s] !== 0x30 || b[s + 1] !== 0x78) throw UNEXPECTED;
            txHash = b.toString("latin1", s, e);
          }
        }
        const next = this.#peek();
        if (next === COMMA) this.#i++;
        else break;
      }
    }
    this.#expect(CLOSE_OBJECT);
    // Fields the generic path would read as undefined: let it decide what they mean.
    if (data < 0 || blockNumber < 0 || logIndex < 0 || txHash === undefined || !(seen & (1 << TOPICS))) throw UNEXPECTED;
    if (topics !== 3 || dataEnd - data !== 66 || removed) return undefined;
    if (this.#token === undefined && address < 0) throw UNEXPECTED;
    return {
      token: this.#token ?? this.#book.at(b, address),
      blockNumber,
      logIndex,
      txHash: txHash as Hash,
      from: this.#book.at(b, from),
      to: this.#book.at(b, to),
      value: this.#amount(data, dataEnd),
    };
  }

  /**
   * A 32-byte amount ("0x" and 64 hex digits): added up as a number when its significant digits
   * fit one exactly (13 hex digits, 52 bits: transfer amounts nearly always do), else, and for
   * any digit that is not hex, by BigInt on the text (so the same SyntaxError as `transfersOf`).
   */
  #amount(start: number, end: number): bigint {
    const b = this.#b;
    let i = start + 2;
    while (i < end && b[i] === 0x30) i++;
    if (end - i > 13) return BigInt(b.toString("latin1", start, end));
    let n = 0;
    for (; i < end; i++) {
      const digit = HEX[b[i] as number] as number;
      if (digit < 0) return BigInt(b.toString("latin1", start, end));
      n = n * 16 + digit;
    }
    return BigInt(n);
  }

  /** Where the address in a 32-byte topic starts (its last 40 hex digits). */
  #topicAddress(start: number, end: number): number {
    if (end - start !== 66) throw UNEXPECTED;
    return start + 26;
  }

  /** A hex quantity ("0x1a") as a number; anything else is for the generic path. */
  #quantity(start: number, end: number): number {
    const b = this.#b;
    if (end - start < 3 || end - start > 15 || b[start] !== 0x30 || b[start + 1] !== 0x78) throw UNEXPECTED;
    let n = 0;
    for (let i = start + 2; i < end; i++) {
      const digit = HEX[b[i] as number] as number;
      if (digit < 0) throw UNEXPECTED;
      n = n * 16 + digit;
    }
    return n;
  }

  /** Which of the needed fields the key between `start` and `end` names (0: none). */
  #field(start: number, end: number): number {
    const candidates = FIELDS_BY_LENGTH[end - start];
    if (candidates === undefined) return 0;
    for (const { bytes, id } of candidates) if (this.#same(start, end, bytes)) return id;
    return 0;
  }

  #same(start: number, end: number, bytes: Buffer): boolean {
    if (end - start !== bytes.length) return false;
    const b = this.#b;
    for (let i = 0; i < bytes.length; i++) if (b[start + i] !== bytes[i]) return false;
    return true;
  }

  /** A string: where its contents start; `#end` is where they end (no escapes, see the class). */
  #string(): number {
    this.#expect(QUOTE);
    const b = this.#b;
    const start = this.#i;
    // A loop over the bytes, not Buffer's indexOf: the strings are short (keys, quantities, hashes
    // of 66 characters), and a native call costs more than the bytes it would read (with the
    // loop, the reader takes about 18% less time on the bench chain's answers).
    const length = b.length;
    let end = start;
    while (end < length && b[end] !== QUOTE) end++;
    if (end === length) throw UNEXPECTED;
    this.#end = end;
    this.#i = end + 1;
    return start;
  }

  #boolean(): boolean {
    const b = this.#b;
    this.#peek();
    const i = this.#i;
    if (b[i] === 0x74 && b[i + 1] === 0x72 && b[i + 2] === 0x75 && b[i + 3] === 0x65) {
      this.#i += 4;
      return true;
    }
    if (b[i] === 0x66 && b[i + 1] === 0x61 && b[i + 2] === 0x6c && b[i + 3] === 0x73 && b[i + 4] === 0x65) {
      this.#i += 5;
      return false;
    }
    throw UNEXPECTED;
  }

  /** Skip a string, number, true, false or null; objects and arrays are for the generic path. */
  #scalar(): void {
    const c = this.#peek();
    if (c === QUOTE) {
      this.#string();
      return;
    }
    if (c === OPEN_OBJECT || c === OPEN_ARRAY || c === -1) throw UNEXPECTED;
    const b = this.#b;
    let i = this.#i;
    // A literal or number runs to the next structural character or space; JSON.parse checks
    // the answers this lets through only when something else sends them there.
    while (i < b.length) {
      const x = b[i] as number;
      if (x === COMMA || x === CLOSE_OBJECT || x === CLOSE_ARRAY || x <= 0x20) break;
      if (!((x >= 0x30 && x <= 0x39) || (x >= 0x61 && x <= 0x7a) || x === 0x2d || x === 0x2b || x === 0x2e || x === 0x45)) throw UNEXPECTED;
      i++;
    }
    const word = b.toString("latin1", this.#i, i);
    if (word !== "true" && word !== "false" && word !== "null" && !/^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(word)) throw UNEXPECTED;
    this.#i = i;
  }

  #expect(char: number): void {
    if (this.#peek() !== char) throw UNEXPECTED;
    this.#i++;
  }

  /** The next character that is not white space (-1 at the end), without taking it. */
  #peek(): number {
    const b = this.#b;
    const length = b.length;
    let i = this.#i;
    while (i < length) {
      const c = b[i] as number;
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
      i++;
    }
    this.#i = i;
    return i < length ? (b[i] as number) : -1;
  }
}
