const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Parses a Go duration as Kubernetes writes it ("15m", "1h30m", "0s") into milliseconds. */
export function parseDuration(text: string): number {
  const parts = [...text.matchAll(/(\d+)(ns|us|ms|s|m|h)/g)];
  if (parts.length === 0 || parts.map((part) => part[0]).join('') !== text) {
    throw new Error(`not a duration: "${text}"`);
  }
  return parts.reduce((total, [, amount, unit]) => total + Number(amount) * (UNIT_MS[unit ?? ''] ?? 0), 0);
}
