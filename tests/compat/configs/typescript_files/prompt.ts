interface Context {
  vars: { topic: string; count: number; detail?: string };
  provider?: { id: string };
}

enum Tone {
  Calm = 'calm',
  Loud = 'loud',
}

export default function ({ vars }: Context): string {
  const tone: Tone = vars.count > 2 ? Tone.Loud : Tone.Calm;
  return `Write ${vars.count} ${tone} lines about ${vars.topic}. ${vars.detail ?? ''}`;
}
