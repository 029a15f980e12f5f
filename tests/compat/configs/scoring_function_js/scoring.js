// The mean of the named scores against the context's threshold (0.5 when none is set).
function mean(namedScores, context) {
  const values = Object.values(namedScores);
  const score = values.reduce((a, b) => a + b, 0) / values.length;
  const threshold = context?.threshold ?? 0.5;
  console.log('scores', namedScores, 'threshold', threshold);
  return { pass: score >= threshold, score, reason: `mean ${score} against ${threshold}` };
}
module.exports = mean;
module.exports.throws = () => {
  throw new Error('no scores today');
};
module.exports.nothing = () => 'a text';
