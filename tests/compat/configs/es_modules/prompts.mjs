export function question(context) {
  return `ESM prompt about ${context.vars.topic} (${import.meta.url.endsWith("prompts.mjs")})`;
}
export const chat = async (context) => [{ role: "user", content: "default {{ topic }}" }];
