/** A figure with `digits` decimals (a non-finite one as is): every bench's output. */
export const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : String(n));
