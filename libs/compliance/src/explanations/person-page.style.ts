/**
 * The page style of the documents written for the person a decision concerns: the explanation of one decision
 * (explanation.html.ts) and the report of every decision about them (subject-report.html.ts). Plain, large enough to
 * read on paper, ligatures off so that the text extracted from the PDF reads as written.
 */
export const PERSON_PAGE_STYLE = `
  @page { size: A4; margin: 18mm 18mm 20mm 18mm; }
  body { font-family: "Liberation Sans", "DejaVu Sans", Arial, Helvetica, sans-serif; font-size: 11pt; color: #1a1a1a; line-height: 1.5; font-variant-ligatures: none; font-feature-settings: "liga" 0, "clig" 0; }
  h1 { font-size: 20pt; margin: 0 0 4mm; color: #0d2b5c; }
  h2 { font-size: 14pt; color: #0d2b5c; margin: 8mm 0 3mm; break-after: avoid; }
  p, li { margin: 0 0 2mm; }
  .note { font-size: 9.5pt; color: #555; }
  .contest { break-inside: avoid; }
  .contact { font-size: 12pt; font-weight: bold; white-space: pre-wrap; }`;
