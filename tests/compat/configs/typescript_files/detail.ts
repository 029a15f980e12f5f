module.exports = async function (varName: string, prompt: string, vars: Record<string, unknown>) {
  const note: string = `(${varName}: ${String(vars.topic)} have feathers)`;
  return { output: note };
};
