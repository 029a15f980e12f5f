export const trimmed = (output: string, context: { vars: Record<string, unknown> }): string =>
  `${output.trim()} [${context.vars.topic as string}]`;
