module.exports = function () {
  return ['Ann', 'Bob'].map((name) => ({
    description: `greets ${name}`,
    vars: { name },
    assert: [{ type: 'contains', value: name }],
  }));
};
