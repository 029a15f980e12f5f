export default function check(output, context) {
  return output.includes(context.vars.topic);
}
