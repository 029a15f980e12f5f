module.exports = function (output, context) {
  return { pass: output.includes(context.vars.must), score: 0.9, reason: 'js file' };
};
module.exports.half = () => 0.5;
