// The pages' icon, drawn here: a dark square with three lines of "text". The SVG is for browsers
// that take one; /favicon.ico (what every browser asks for unprompted) is a 16x16 32-bit ICO drawn
// from the same shape.

/** How every page links its icon. */
export const ICON_LINKS =
  '<link rel="icon" href="/favicon.ico" sizes="16x16"><link rel="icon" href="/favicon.svg" type="image/svg+xml">';

const BACKGROUND = [0x1b, 0x1b, 0x1b];
const INK = [0xf2, 0xf2, 0xf2];
/** The lines of text: [row, first column, last column] on the 16x16 grid. */
const LINES: [number, number, number][] = [
  [4, 3, 12],
  [7, 3, 10],
  [10, 3, 12],
];

export const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#1b1b1b"/>${LINES.map(
  ([y, x1, x2]) => `<rect x="${x1}" y="${y}" width="${x2 - x1 + 1}" height="2" fill="#f2f2f2"/>`,
).join("")}</svg>\n`;

function inked(x: number, y: number): boolean {
  return LINES.some(([row, x1, x2]) => (y === row || y === row + 1) && x >= x1 && x <= x2);
}

/** A round-cornered square: the corner pixels stay transparent. */
function inside(x: number, y: number): boolean {
  const cx = x < 8 ? 2 : 13;
  const cy = y < 8 ? 2 : 13;
  const corner = (x < 2 || x > 13) && (y < 2 || y > 13);
  return !corner || (x - cx) ** 2 + (y - cy) ** 2 <= 6;
}

/** ICONDIR + one ICONDIRENTRY + a BITMAPINFOHEADER image (BGRA rows bottom-up, then the AND mask). */
export function faviconIco(): Buffer {
  const size = 16;
  const pixels = Buffer.alloc(size * size * 4);
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const at = ((size - 1 - y) * size + x) * 4;
      if (!inside(x, y)) continue; // transparent
      const [r, g, b] = inked(x, y) ? INK : BACKGROUND;
      pixels.set([b!, g!, r!, 0xff], at);
    }
  }
  const mask = Buffer.alloc(size * 4); // rows of 16 bits padded to 32; alpha decides, so all zero
  const header = Buffer.alloc(40);
  header.writeUInt32LE(40, 0);
  header.writeInt32LE(size, 4);
  header.writeInt32LE(size * 2, 8); // the XOR image and the AND mask
  header.writeUInt16LE(1, 12);
  header.writeUInt16LE(32, 14);
  const image = Buffer.concat([header, pixels, mask]);
  const dir = Buffer.alloc(6 + 16);
  dir.writeUInt16LE(0, 0);
  dir.writeUInt16LE(1, 2); // an icon
  dir.writeUInt16LE(1, 4); // one image
  dir.writeUInt8(size, 6);
  dir.writeUInt8(size, 7);
  dir.writeUInt16LE(1, 10); // planes
  dir.writeUInt16LE(32, 12); // bits per pixel
  dir.writeUInt32LE(image.length, 14);
  dir.writeUInt32LE(dir.length, 18);
  return Buffer.concat([dir, image]);
}
