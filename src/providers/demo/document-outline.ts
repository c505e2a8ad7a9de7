/** One heading of a document: its level (1 = top) and its text. */
export interface DocumentHeading {
  level: number;
  text: string;
}

/** What the demo model tells about a file: its size, headings and first paragraph. */
export interface DocumentOutline {
  lines: number;
  headings: DocumentHeading[];
  firstParagraph: string | undefined;
}

const numberedLine = /^\s*\d+(?:\t|→)/;
const atxHeading = /^ {0,3}(#{1,6})\s+(.+?)\s*#*\s*$/;
const setextUnderline = /^ {0,3}(=+|-+)\s*$/;
const fence = /^ {0,3}(```|~~~)/;

/**
 * Removes the line-number gutter a read tool puts before each line (`<n>\t<text>`), dropping the tool's
 * own notes (lines without a number); text whose first line carries no gutter is returned unchanged, so a
 * document whose own lines start with numbers is left alone.
 */
export function stripLineNumbers(text: string): string {
  const lines = text.split('\n');
  const content = lines.filter((line) => line.trim() !== '');
  const numbered = content.filter((line) => numberedLine.test(line));
  if (content.length === 0 || !numberedLine.test(content[0]!) || numbered.length * 2 < content.length)
    return text;
  return lines
    .filter((line) => numberedLine.test(line))
    .map((line) => line.replace(numberedLine, ''))
    .join('\n');
}

/** Computes the outline of a text document: Markdown ATX and setext headings outside code fences. */
export function outlineDocument(text: string): DocumentOutline {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  const headings: DocumentHeading[] = [];
  let inFence = false;
  let paragraph: string[] = [];
  let firstParagraph: string | undefined;
  const closeParagraph = (): void => {
    if (firstParagraph === undefined && paragraph.length > 0) firstParagraph = paragraph.join(' ');
    paragraph = [];
  };
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!;
    if (fence.test(line)) {
      inFence = !inFence;
      closeParagraph();
      continue;
    }
    if (inFence) continue;
    const atx = atxHeading.exec(line);
    if (atx !== null) {
      closeParagraph();
      headings.push({ level: atx[1]!.length, text: atx[2]! });
      continue;
    }
    const next = lines[index + 1];
    if (line.trim() !== '' && paragraph.length === 0 && next !== undefined && setextUnderline.test(next)) {
      headings.push({ level: next.trim().startsWith('=') ? 1 : 2, text: line.trim() });
      index++;
      continue;
    }
    if (line.trim() === '') closeParagraph();
    else if (!/^\s*([-*+]|\d+\.|>|\||<)/.test(line) || paragraph.length > 0) paragraph.push(line.trim());
    else closeParagraph();
  }
  closeParagraph();
  return { lines: lines.length, headings, firstParagraph };
}

/** Renders an outline as a short Markdown summary naming the file. */
export function renderOutlineSummary(fileName: string, outline: DocumentOutline): string {
  const parts: string[] = [];
  const lineWord = outline.lines === 1 ? 'line' : 'lines';
  if (outline.headings.length === 0) {
    parts.push(`\`${fileName}\` has ${outline.lines} ${lineWord} and no Markdown headings.`);
  } else {
    const headingWord = outline.headings.length === 1 ? 'heading' : 'headings';
    parts.push(
      `\`${fileName}\` has ${outline.lines} ${lineWord} and ${outline.headings.length} ${headingWord}. Its outline:`,
    );
    const top = Math.min(...outline.headings.map((heading) => heading.level));
    const shown = outline.headings.slice(0, 40);
    parts.push(
      shown.map((heading) => `${'  '.repeat(Math.max(0, heading.level - top))}- ${heading.text}`).join('\n'),
    );
    if (outline.headings.length > shown.length) {
      parts.push(`…and ${outline.headings.length - shown.length} more headings.`);
    }
  }
  if (outline.firstParagraph !== undefined) {
    const sentence =
      outline.firstParagraph.length > 300
        ? `${outline.firstParagraph.slice(0, 297)}…`
        : outline.firstParagraph;
    parts.push(`It opens with: “${sentence}”`);
  }
  return parts.join('\n\n');
}
