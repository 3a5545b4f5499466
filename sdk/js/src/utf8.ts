// UTF-8 without relying on TextEncoder/TextDecoder, which QuickJS lacks.
// Decoding is lossy like `TextDecoder` (and Rust's `from_utf8_lossy`): each
// maximal invalid subpart becomes U+FFFD.

const NativeEncoder: any = (globalThis as any).TextEncoder;
const NativeDecoder: any = (globalThis as any).TextDecoder;
const nativeEncoder = NativeEncoder ? new NativeEncoder() : undefined;
const nativeDecoder = NativeDecoder ? new NativeDecoder() : undefined;

/** UTF-8 bytes of a string (lone surrogates become U+FFFD). */
export function encodeUtf8(text: string): Uint8Array {
  if (nativeEncoder) return nativeEncoder.encode(text);
  const out: number[] = [];
  for (let i = 0; i < text.length; i++) {
    let c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        i++;
      }
    }
    if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd;
    if (c < 0x80) out.push(c);
    else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 63));
    else if (c < 0x10000) out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
    else out.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 63), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
  }
  return Uint8Array.from(out);
}

/** The string of UTF-8 bytes; invalid sequences become U+FFFD. */
export function decodeUtf8(bytes: Uint8Array): string {
  if (nativeDecoder) return nativeDecoder.decode(bytes);
  let out = "";
  let chunk: number[] = [];
  const flush = () => {
    out += String.fromCharCode(...chunk);
    chunk = [];
  };
  const n = bytes.length;
  let i = 0;
  while (i < n) {
    const b = bytes[i]!;
    let cp = 0xfffd;
    let need = 0;
    let lo = 0x80;
    let hi = 0xbf;
    if (b < 0x80) {
      cp = b;
    } else if (b >= 0xc2 && b <= 0xdf) {
      need = 1;
      cp = b & 0x1f;
    } else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      cp = b & 0x0f;
      if (b === 0xe0) lo = 0xa0;
      if (b === 0xed) hi = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      cp = b & 0x07;
      if (b === 0xf0) lo = 0x90;
      if (b === 0xf4) hi = 0x8f;
    }
    i++;
    if (b >= 0x80 && need === 0) {
      cp = 0xfffd;
    } else {
      let ok = true;
      for (let k = 0; k < need; k++) {
        const next = bytes[i];
        if (next === undefined || next < lo || next > hi) {
          ok = false;
          break;
        }
        cp = (cp << 6) | (next & 0x3f);
        lo = 0x80;
        hi = 0xbf;
        i++;
      }
      if (!ok) cp = 0xfffd;
    }
    if (cp >= 0x10000) {
      cp -= 0x10000;
      chunk.push(0xd800 + (cp >> 10), 0xdc00 + (cp & 0x3ff));
    } else {
      chunk.push(cp);
    }
    if (chunk.length >= 8192) flush();
  }
  flush();
  return out;
}
