// A var loader: called with the var's name, the prompt, the other vars and the provider.
module.exports = function (varName, prompt, vars, provider) {
  return { output: `${varName} loaded in JavaScript for ${vars.topic} by ${provider.id()}` };
};
