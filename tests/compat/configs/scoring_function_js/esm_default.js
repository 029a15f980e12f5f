export default function (namedScores) {
  return { pass: namedScores.topical === 1, score: namedScores.topical, reason: 'topical only' };
}
