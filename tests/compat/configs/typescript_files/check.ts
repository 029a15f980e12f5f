type Ctx = { vars: { topic: string } };

export function mentions(output: string, context: Ctx): boolean {
  return output.toLowerCase().includes(context.vars.topic);
}

const longEnough = (output: string): { pass: boolean; score: number; reason: string } => ({
  pass: output.length > 30,
  score: Math.min(1, output.length / 100),
  reason: `${output.length} characters`,
});

export default longEnough;
