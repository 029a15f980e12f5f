type Message = { role: 'system' | 'user'; content: string };

export function shout({ vars }: { vars: Record<string, unknown> }): Message[] {
  const topic = String(vars.topic).toUpperCase();
  return [
    { role: 'system', content: 'You answer loudly.' },
    { role: 'user', content: `TELL ME ABOUT ${topic}!` },
  ];
}
