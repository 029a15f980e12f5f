interface Test {
  vars: Record<string, string>;
  assert: { type: string; value: string }[];
}

const tests: Test[] = [
  { vars: { name: 'typed' }, assert: [{ type: 'starts-with', value: 'Hello' }] },
];

export default tests;
