// JavaScript prompt functions: named exports, an async one, one returning a chat object.
module.exports.shout = (context) => `SHOUT ${context.vars.topic.toUpperCase()} via ${context.provider.id}`;
module.exports.messages = async (context) => [
  { role: "user", content: "Chat about {{ topic }} (" + Object.keys(context.config).length + ")" },
];
module.exports.withConfig = (context) => ({
  prompt: [{ role: "user", content: "wrapped {{ topic }}" }],
  config: { max_tokens: 16 },
});
module.exports.throws = () => {
  throw new Error("js prompt failed");
};
