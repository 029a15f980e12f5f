module.exports = function (output, context) {
  const words = output.split(' ').length;
  return { pass: words > 3, score: words / 10, reason: `${words} words for ${context.vars.q}` };
};
module.exports.shortEnough = (output) => output.length < 100;
