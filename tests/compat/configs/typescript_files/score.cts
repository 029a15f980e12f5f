interface Scores {
  [metric: string]: number;
}

function score(namedScores: Scores, context: { threshold?: number }) {
  const values = Object.values(namedScores);
  const mean = values.reduce((a: number, b: number) => a + b, 0) / (values.length || 1);
  return { pass: mean >= (context.threshold ?? 0.5), score: mean, reason: `mean ${mean}` };
}

module.exports = { score };
