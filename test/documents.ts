import { AlignmentType, Document, HeadingLevel, Packer, Paragraph, TextRun } from 'docx';
import { PDFDocument, StandardFonts } from 'pdf-lib';

// Real PDF and DOCX files for tests, made with pdf-lib and docx (what a user would upload).

/** A PDF with one page per entry, each page's lines drawn as text. */
export async function pdfFile(pages: string[][]): Promise<Buffer> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  for (const lines of pages) {
    const page = pdf.addPage([595, 842]);
    lines.forEach((line, i) => page.drawText(line, { x: 50, y: 780 - i * 18, size: 11, font }));
  }
  return Buffer.from(await pdf.save());
}

/** A DOCX with a heading and paragraphs. */
export async function docxFile(heading: string, paragraphs: string[]): Promise<Buffer> {
  const doc = new Document({
    sections: [
      {
        children: [
          new Paragraph({ text: heading, heading: HeadingLevel.HEADING_1 }),
          ...paragraphs.map((text) => new Paragraph({ alignment: AlignmentType.LEFT, children: [new TextRun(text)] })),
        ],
      },
    ],
  });
  return Packer.toBuffer(doc);
}
