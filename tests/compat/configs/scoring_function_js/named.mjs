export function strict(namedScores) {
  const all = Object.values(namedScores).every((v) => v === 1);
  return { pass: all, score: all ? 1 : 0, reason: all ? 'every score is 1' : 'a score is below 1' };
}
export const lenient = async (namedScores, context) => {
  await new Promise((resolve) => setTimeout(resolve, 5));
  return { pass: true, score: 0.25, reason: `${context.componentResults.length} components` };
};
