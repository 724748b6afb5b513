import { createHash } from 'node:crypto';

/**
 * Turns a prompt into a picture description (SVG): the prompt's hash picks a
 * palette, a gradient and a handful of circles and rectangles. The same prompt
 * always gives the same palette; each image of a batch (`variant`) gets its own
 * arrangement of shapes.
 */

export interface ArtInput {
  prompt: string;
  /** Which image of the batch (0-based). */
  variant: number;
  width: number;
  height: number;
  /** No background: shapes inside an oval, fully transparent outside it. */
  transparent: boolean;
}

/** Five colours (`#rrggbb`) that stand for the prompt. */
export function paletteOf(prompt: string): string[] {
  const h = createHash('sha256').update(prompt).digest();
  const baseHue = ((h[0]! << 8) | h[1]!) % 360;
  const scheme = h[2]! % 3; // analogous, complementary, triadic
  const steps = scheme === 0 ? [0, 25, 50, -25, 12] : scheme === 1 ? [0, 180, 20, 200, 160] : [0, 120, 240, 60, 180];
  return steps.map((step, i) => {
    const saturation = 45 + (h[3 + i]! % 45);
    const lightness = 30 + (h[8 + i]! % 45);
    return hslToHex((baseHue + step + 360) % 360, saturation, lightness);
  });
}

/** A generated picture: gradient background (unless transparent) and shapes. */
export function artSvg(input: ArtInput): string {
  const { width: w, height: h } = input;
  const colors = paletteOf(input.prompt);
  const random = seededRandom(`${input.prompt}\u0000${input.variant}`);
  const angle = random() * Math.PI * 2;
  const [x1, y1, x2, y2] = gradientLine(angle);
  const defs = [
    `<linearGradient id="bg" x1="${x1}" y1="${y1}" x2="${x2}" y2="${y2}"><stop offset="0" stop-color="${colors[0]}"/><stop offset="1" stop-color="${colors[1]}"/></linearGradient>`,
    `<radialGradient id="glow"><stop offset="0" stop-color="${colors[2]}" stop-opacity="0.9"/><stop offset="1" stop-color="${colors[2]}" stop-opacity="0"/></radialGradient>`,
  ];
  let body = '';
  if (input.transparent) {
    defs.push(subjectClip(w, h));
    body += `<g clip-path="url(#subject)"><rect width="${w}" height="${h}" fill="url(#bg)"/>${shapes(random, colors, w, h, 6 + Math.floor(random() * 5), 0.95)}</g>`;
  } else {
    body += `<rect width="${w}" height="${h}" fill="url(#bg)"/>`;
    body += `<circle cx="${fmt(random() * w)}" cy="${fmt(random() * h)}" r="${fmt(Math.max(w, h) * 0.45)}" fill="url(#glow)"/>`;
    body += shapes(random, colors, w, h, 6 + Math.floor(random() * 6), 0.9);
  }
  return svg(w, h, defs, body);
}

/** What an edit lays over its first input: a tint in the prompt's colour and a few translucent shapes. */
export function editOverlaySvg(input: ArtInput): string {
  const { width: w, height: h } = input;
  const colors = paletteOf(input.prompt);
  const random = seededRandom(`edit\u0000${input.prompt}\u0000${input.variant}`);
  const body = `<rect width="${w}" height="${h}" fill="${colors[0]}" fill-opacity="0.28"/>${shapes(random, colors, w, h, 3 + Math.floor(random() * 3), 0.6)}`;
  return svg(w, h, [], body);
}

/** White inside the subject oval, nothing outside: composited with `dest-in` it cuts an image out. */
export function subjectMaskSvg(width: number, height: number): string {
  return svg(width, height, [], `<ellipse ${ellipseAttrs(width, height)} fill="#ffffff"/>`);
}

function shapes(random: () => number, colors: string[], w: number, h: number, count: number, maxOpacity: number): string {
  const unit = Math.min(w, h);
  let out = '';
  for (let i = 0; i < count; i++) {
    const color = colors[1 + Math.floor(random() * (colors.length - 1))]!;
    const opacity = fmt(maxOpacity - random() * 0.35);
    const cx = random() * w;
    const cy = random() * h;
    const size = unit * (0.08 + random() * 0.22);
    if (random() < 0.5) {
      out += `<circle cx="${fmt(cx)}" cy="${fmt(cy)}" r="${fmt(size)}" fill="${color}" fill-opacity="${opacity}"/>`;
    } else {
      const rw = size * (1 + random());
      const rh = size * (0.5 + random());
      const rotate = fmt(random() * 90 - 45);
      out += `<rect x="${fmt(cx - rw / 2)}" y="${fmt(cy - rh / 2)}" width="${fmt(rw)}" height="${fmt(rh)}" rx="${fmt(size * 0.1)}" fill="${color}" fill-opacity="${opacity}" transform="rotate(${rotate} ${fmt(cx)} ${fmt(cy)})"/>`;
    }
  }
  return out;
}

function subjectClip(w: number, h: number): string {
  return `<clipPath id="subject"><ellipse ${ellipseAttrs(w, h)}/></clipPath>`;
}

function ellipseAttrs(w: number, h: number): string {
  return `cx="${fmt(w / 2)}" cy="${fmt(h / 2)}" rx="${fmt(w * 0.4)}" ry="${fmt(h * 0.4)}"`;
}

function svg(w: number, h: number, defs: string[], body: string): string {
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}"><defs>${defs.join('')}</defs>${body}</svg>`;
}

function gradientLine(angle: number): [string, string, string, string] {
  const dx = Math.cos(angle) / 2;
  const dy = Math.sin(angle) / 2;
  return [fmt(0.5 - dx), fmt(0.5 - dy), fmt(0.5 + dx), fmt(0.5 + dy)];
}

/** A small deterministic generator (mulberry32) seeded from the SHA-256 of `seed`. */
function seededRandom(seed: string): () => number {
  let state = createHash('sha256').update(seed).digest().readUInt32LE(0);
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function hslToHex(hue: number, saturation: number, lightness: number): string {
  const s = saturation / 100;
  const l = lightness / 100;
  const k = (n: number) => (n + hue / 30) % 12;
  const a = s * Math.min(l, 1 - l);
  const channel = (n: number) => {
    const value = l - a * Math.max(-1, Math.min(k(n) - 3, Math.min(9 - k(n), 1)));
    return Math.round(value * 255)
      .toString(16)
      .padStart(2, '0');
  };
  return `#${channel(0)}${channel(8)}${channel(4)}`;
}

function fmt(n: number): string {
  return (Math.round(n * 100) / 100).toString();
}
