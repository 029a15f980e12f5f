export const named = (output) => ({ pass: output.length > 3, score: 0.75, reason: "named esm" });
export function other(output) { return false; }
