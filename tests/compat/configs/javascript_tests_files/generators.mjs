export async function numbered(config) {
  await new Promise((resolve) => setTimeout(resolve, 1));
  return Array.from({ length: config.count }, (_, i) => ({
    vars: { name: `${config.prefix} ${i + 1}` },
    assert: [{ type: 'icontains', value: i % 2 ? 'guest' : 'nobody' }],
  }));
}
