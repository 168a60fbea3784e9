import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';

export interface PdfText {
  pages: string[];
  /** Every page's text, joined with spaces, white space folded. */
  text: string;
  title: string | undefined;
  language: string | undefined;
}

/** The text of a PDF as pdf.js extracts it (what a reader selects and copies), with its metadata. */
export async function pdfText(pdf: Buffer): Promise<PdfText> {
  const doc = await getDocument({ data: new Uint8Array(pdf), useSystemFonts: false, isEvalSupported: false })
    .promise;
  try {
    const pages: string[] = [];
    for (let n = 1; n <= doc.numPages; n++) {
      const page = await doc.getPage(n);
      const content = await page.getTextContent();
      pages.push(
        content.items
          .map((item) => ('str' in item ? item.str : ''))
          .join(' ')
          .replace(/\s+/g, ' ')
          .trim(),
      );
    }
    const meta = await doc.getMetadata();
    const info = meta.info as { Title?: string; Language?: string };
    return { pages, text: pages.join(' '), title: info.Title, language: info.Language };
  } finally {
    await doc.destroy();
  }
}
