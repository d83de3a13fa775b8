import { compile } from "html-to-text";

// Compiled once: html-to-text builds its formatters per options object.
const convert = compile({
  wordwrap: 78,
  selectors: [
    // Links read as "text [url]"; a link whose text is its address reads once.
    { selector: "a", options: { hideLinkHrefIfSameAsText: true } },
    { selector: "img", format: "skip" },
  ],
});

/** The plain-text part of an email: its HTML as text, wrapped for a mail reader. */
export function plainTextOf(html: string): string {
  return convert(html);
}
