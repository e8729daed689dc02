// Kubernetes resource quantities ("1536Mi", "500m") as numbers, to compare and convert sizes.
const SUFFIXES: Record<string, number> = {
  '': 1,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

/** A Kubernetes quantity as a number ("1536Mi" → 1610612736, "500m" → 0.5); NaN if it is not one. */
export function quantityValue(quantity: string): number {
  const match = /^([0-9]+(?:\.[0-9]+)?)(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$/.exec(quantity);
  if (match === null) return Number.NaN;
  return Number(match[1]) * (SUFFIXES[match[2] ?? ''] ?? Number.NaN);
}
