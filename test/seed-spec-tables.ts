import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** One row of a field table in the seed: the field, its type, and the remaining columns' text. */
export interface SeedField {
  name: string;
  type: string;
  /** The "Notes" / "Form shown" column(s), as written. */
  notes: string;
}

export interface SeedTable {
  /** The subsection it belongs to, e.g. "2.2". */
  section: string;
  /** The subsection's title, e.g. "Step". */
  sectionTitle: string;
  /** The line that introduces the table, when it is not the first of its subsection ("Step `metadata` fields:"). */
  caption: string;
  /** Its position in the subsection (0 = the subsection's main table). */
  index: number;
  fields: SeedField[];
}

export const SEED_SPEC_PATH = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  "..",
  "docs",
  "seed-spec.md",
);

function cells(line: string): string[] {
  return line
    .trim()
    .replace(/^\|/, "")
    .replace(/\|$/, "")
    .split("|")
    .map((cell) => cell.trim());
}

/**
 * Reads every field table of the seed's part 2 (2.1–2.5, and the tables inside them): a table is
 * a run of `|` lines whose header has a `Field` and a `Type` column.
 */
export function parseSeedTables(markdown: string = fs.readFileSync(SEED_SPEC_PATH, "utf8")): SeedTable[] {
  const lines = markdown.split(/\r?\n/);
  const tables: SeedTable[] = [];
  let section = "";
  let sectionTitle = "";
  let caption = "";
  let inPart2 = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? "";
    const part = /^## (\d+)\./.exec(line);
    if (part) {
      inPart2 = part[1] === "2";
      section = "";
      continue;
    }
    const sub = /^### (\d+\.\d+)\s+(.+?)\s*(?:\(.*\))?$/.exec(line);
    if (sub) {
      section = sub[1] ?? "";
      sectionTitle = sub[2] ?? "";
      caption = "";
      continue;
    }
    if (!inPart2 || section === "") continue;
    if (!line.startsWith("|")) {
      if (line.trim() !== "") caption = line.trim();
      continue;
    }
    const header = cells(line).map((h) => h.toLowerCase());
    const fieldColumn = header.indexOf("field");
    const typeColumn = header.indexOf("type");
    if (fieldColumn === -1 || typeColumn === -1) continue;
    const fields: SeedField[] = [];
    i += 2; // the header and the |---| line
    for (; i < lines.length && (lines[i] ?? "").startsWith("|"); i++) {
      const row = cells(lines[i] ?? "");
      fields.push({
        name: row[fieldColumn] ?? "",
        type: row[typeColumn] ?? "",
        notes: row.filter((_, c) => c !== fieldColumn && c !== typeColumn).join(" "),
      });
    }
    i--;
    const index = tables.filter((t) => t.section === section).length;
    tables.push({ section, sectionTitle, caption: index === 0 ? "" : caption, index, fields });
  }
  return tables;
}
