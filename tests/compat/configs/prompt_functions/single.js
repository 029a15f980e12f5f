module.exports = function (context) {
  return "Default export on " + context.vars.topic + " for " + context.provider.label;
};
