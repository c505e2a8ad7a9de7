/** A file attached to the next message: an image (sent as an image block) or a text file (sent as text). */
export type Attachment =
  | { kind: 'image'; id: number; name: string; mediaType: string; data: string }
  | { kind: 'file'; id: number; name: string; text: string };

/** Image types models accept. */
export const imageTypes: ReadonlySet<string> = new Set([
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
]);

const maxTextBytes = 512 * 1024;
const maxImageBytes = 5 * 1024 * 1024;
let ids = 0;

/** Reads dropped, pasted or picked files into attachments; a file that cannot be attached gets a reason. */
export async function readAttachments(
  files: readonly File[],
  acceptsImages: boolean,
): Promise<{ attached: Attachment[]; refused: string[] }> {
  const attached: Attachment[] = [];
  const refused: string[] = [];
  for (const file of files) {
    const name = file.name === '' ? 'pasted file' : file.name;
    if (file.type.startsWith('image/')) {
      if (!imageTypes.has(file.type))
        refused.push(`${name}: ${file.type} images are not supported (PNG, JPEG, GIF, WebP are)`);
      else if (!acceptsImages)
        refused.push(`${name}: the selected model does not accept images; pick one that does`);
      else if (file.size > maxImageBytes) refused.push(`${name}: images are limited to 5 MB`);
      else
        attached.push({ kind: 'image', id: ++ids, name, mediaType: file.type, data: await base64Of(file) });
      continue;
    }
    if (file.size > maxTextBytes) {
      refused.push(
        `${name}: text files are limited to 512 KB (let the agent read bigger files with its tools)`,
      );
      continue;
    }
    const text = await file.text();
    if (text.includes('\u0000')) refused.push(`${name}: only text files and images can be attached`);
    else attached.push({ kind: 'file', id: ++ids, name, text });
  }
  return { attached, refused };
}

/** The message text with the attached text files appended, each fenced under its name. */
export function textWithFiles(text: string, attachments: readonly Attachment[]): string {
  const files = attachments.filter((attachment) => attachment.kind === 'file');
  if (files.length === 0) return text;
  const fence = (body: string): string => '`'.repeat(Math.max(3, longestRun(body) + 1));
  const parts = files.map(
    (file) =>
      `Attached file \`${file.name}\`:\n\n${fence(file.text)}\n${file.text.replace(/\n$/, '')}\n${fence(file.text)}`,
  );
  return [text.trim(), ...parts].filter((part) => part !== '').join('\n\n');
}

function longestRun(text: string): number {
  let longest = 0;
  for (const run of text.match(/`+/g) ?? []) longest = Math.max(longest, run.length);
  return longest;
}

async function base64Of(file: File): Promise<string> {
  const bytes = new Uint8Array(await file.arrayBuffer());
  let binary = '';
  for (let index = 0; index < bytes.length; index += 0x8000)
    binary += String.fromCharCode(...bytes.subarray(index, index + 0x8000));
  return btoa(binary);
}
