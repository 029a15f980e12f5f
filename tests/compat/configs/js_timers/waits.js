const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
module.exports = async (output) => {
  const order = [];
  setTimeout(() => order.push("late"), 20);
  setTimeout(() => order.push("early"), 5);
  setImmediate(() => order.push("immediate"));
  queueMicrotask(() => order.push("micro"));
  await sleep(40);
  return { pass: order.join(",") === "micro,immediate,early,late", score: 1, reason: order.join(",") };
};
