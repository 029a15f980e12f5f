module.exports = (output) => new Promise((resolve) => {
  let count = 0;
  const id = setInterval(() => {
    count += 1;
    if (count === 3) { clearInterval(id); resolve(count === 3 && output.length > 0); }
  }, 1);
});
