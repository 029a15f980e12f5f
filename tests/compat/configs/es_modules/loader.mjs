export default function (varName, prompt, vars) {
  return { output: `esm var ${varName}` };
}
