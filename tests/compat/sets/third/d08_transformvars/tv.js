module.exports = function (vars, context) {
  return { joined: (vars.items || []).join('|'), hasPrompt: typeof context.prompt };
};
