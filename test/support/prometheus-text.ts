/**
 * A strict parser of the Prometheus text exposition format (version 0.0.4), for tests:
 * prom-client writes the format but cannot read it, and no parser is installed. It throws on
 * anything a Prometheus server would refuse or misread: a malformed line, name, label or value,
 * a TYPE or HELP given twice or after the family's samples, a family's samples split apart, a
 * series given twice, a negative counter, or a histogram whose buckets are unordered, not
 * cumulative, lack `+Inf`, or disagree with `_count`.
 */

/** One sample: its series name, labels and value. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** One metric family: its type, help and samples. */
export interface Family {
  name: string;
  type: "counter" | "gauge" | "histogram" | "summary" | "untyped";
  help: string | undefined;
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(["counter", "gauge", "histogram", "summary", "untyped"]);

function parseValue(text: string, line: number): number {
  if (text === "+Inf") return Number.POSITIVE_INFINITY;
  if (text === "-Inf") return Number.NEGATIVE_INFINITY;
  if (text === "NaN") return Number.NaN;
  if (!/^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/.test(text)) throw new Error(`line ${line}: bad value "${text}"`);
  return Number(text);
}

/** Parse `{a="1",b="x\"y"}` starting at `text[0] === "{"`; returns the labels and the rest of the line. */
function parseLabels(text: string, line: number): { labels: Record<string, string>; rest: string } {
  const labels: Record<string, string> = {};
  let i = 1;
  while (true) {
    if (text[i] === "}") return { labels, rest: text.slice(i + 1) };
    const eq = text.indexOf("=", i);
    if (eq < 0) throw new Error(`line ${line}: label without =`);
    const name = text.slice(i, eq);
    if (!LABEL.test(name) || name.startsWith("__")) throw new Error(`line ${line}: bad label name "${name}"`);
    if (name in labels) throw new Error(`line ${line}: label "${name}" given twice`);
    if (text[eq + 1] !== '"') throw new Error(`line ${line}: label value of "${name}" is not quoted`);
    let value = "";
    let j = eq + 2;
    for (; j < text.length && text[j] !== '"'; j++) {
      if (text[j] === "\\") {
        const next = text[++j];
        if (next === "n") value += "\n";
        else if (next === "\\" || next === '"') value += next;
        else throw new Error(`line ${line}: bad escape \\${next} in label "${name}"`);
      } else value += text[j];
    }
    if (j >= text.length) throw new Error(`line ${line}: unterminated label value of "${name}"`);
    labels[name] = value;
    i = j + 1;
    if (text[i] === ",") i++;
    else if (text[i] !== "}") throw new Error(`line ${line}: expected , or } after label "${name}"`);
  }
}

/** The family a sample name belongs to, given the declared families. */
function familyOf(name: string, families: Map<string, Family>): string {
  for (const suffix of ["_bucket", "_sum", "_count"]) {
    const base = name.slice(0, -suffix.length);
    if (name.endsWith(suffix) && ["histogram", "summary"].includes(families.get(base)?.type ?? "")) return base;
  }
  return name;
}

/** Parse a whole exposition; throws naming the line of the first problem. */
export function parsePrometheusText(text: string): Map<string, Family> {
  if (!text.endsWith("\n")) throw new Error("the exposition must end with a newline");
  const families = new Map<string, Family>();
  const closed = new Set<string>();
  const series = new Set<string>();
  let current: string | undefined;
  const family = (name: string): Family => {
    let f = families.get(name);
    if (!f) {
      f = { name, type: "untyped", help: undefined, samples: [] };
      families.set(name, f);
    }
    return f;
  };
  text
    .slice(0, -1)
    .split("\n")
    .forEach((raw, index) => {
      const line = index + 1;
      if (raw.trim() === "") return;
      const meta = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(raw);
      if (meta) {
        const [, kind, name = "", rest = ""] = meta;
        if (!NAME.test(name)) throw new Error(`line ${line}: bad metric name "${name}"`);
        const f = family(name);
        if (f.samples.length > 0) throw new Error(`line ${line}: ${kind} of ${name} after its samples`);
        if (kind === "TYPE") {
          if (!TYPES.has(rest)) throw new Error(`line ${line}: unknown type "${rest}"`);
          if (f.type !== "untyped" || closed.has(`type:${name}`)) throw new Error(`line ${line}: TYPE of ${name} given twice`);
          f.type = rest as Family["type"];
          closed.add(`type:${name}`);
        } else {
          if (f.help !== undefined) throw new Error(`line ${line}: HELP of ${name} given twice`);
          f.help = rest.replace(/\\n/g, "\n").replace(/\\\\/g, "\\");
        }
        return;
      }
      if (raw.startsWith("#")) return;
      const nameMatch = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(raw);
      if (!nameMatch) throw new Error(`line ${line}: not a sample: ${raw}`);
      const name = nameMatch[0];
      let rest = raw.slice(name.length);
      let labels: Record<string, string> = {};
      if (rest.startsWith("{")) ({ labels, rest } = parseLabels(rest, line));
      const parts = rest.split(" ");
      if (parts[0] !== "" || parts.length < 2 || parts.length > 3) throw new Error(`line ${line}: expected " value [timestamp]"`);
      const value = parseValue(parts[1] as string, line);
      if (parts[2] !== undefined && !/^-?\d+$/.test(parts[2])) throw new Error(`line ${line}: bad timestamp`);
      const base = familyOf(name, families);
      if (current !== base && closed.has(`samples:${base}`)) throw new Error(`line ${line}: samples of ${base} are not together`);
      if (current !== undefined && current !== base) closed.add(`samples:${current}`);
      current = base;
      const id = `${name}${JSON.stringify(Object.entries(labels).sort())}`;
      if (series.has(id)) throw new Error(`line ${line}: series ${id} given twice`);
      series.add(id);
      const f = family(base);
      if (f.type === "counter" && !(value >= 0)) throw new Error(`line ${line}: counter ${name} is ${value}`);
      f.samples.push({ name, labels, value });
    });
  for (const f of families.values()) if (f.type === "histogram") checkHistogram(f);
  return families;
}

function checkHistogram(f: Family): void {
  const groups = new Map<string, { buckets: [number, number][]; count?: number; sum?: number }>();
  for (const s of f.samples) {
    const { le, ...rest } = s.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    const g = groups.get(key) ?? { buckets: [] };
    groups.set(key, g);
    if (s.name === `${f.name}_bucket`) {
      if (le === undefined) throw new Error(`${f.name}: bucket without le`);
      g.buckets.push([parseValue(le, 0), s.value]);
    } else if (s.name === `${f.name}_count`) g.count = s.value;
    else if (s.name === `${f.name}_sum`) g.sum = s.value;
    else throw new Error(`${f.name}: unexpected sample ${s.name}`);
  }
  for (const [key, g] of groups) {
    const last = g.buckets.at(-1);
    if (!last || last[0] !== Number.POSITIVE_INFINITY) throw new Error(`${f.name}${key}: no +Inf bucket last`);
    for (let i = 1; i < g.buckets.length; i++) {
      const [le, n] = g.buckets[i] as [number, number];
      const [prevLe, prevN] = g.buckets[i - 1] as [number, number];
      if (!(le > prevLe)) throw new Error(`${f.name}${key}: buckets not in increasing le`);
      if (n < prevN) throw new Error(`${f.name}${key}: buckets not cumulative`);
    }
    if (g.count === undefined || g.sum === undefined) throw new Error(`${f.name}${key}: _count or _sum missing`);
    if (g.count !== last[1]) throw new Error(`${f.name}${key}: _count ${g.count} differs from the +Inf bucket ${last[1]}`);
  }
}

/** The value of the one sample of `families` named `name` with exactly `labels`, or undefined. */
export function sampleValue(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number | undefined {
  const want = JSON.stringify(Object.entries(labels).sort());
  for (const f of families.values()) {
    for (const s of f.samples) if (s.name === name && JSON.stringify(Object.entries(s.labels).sort()) === want) return s.value;
  }
  return undefined;
}
