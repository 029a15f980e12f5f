module.exports = function (text) {
  return String(text).split(' ').map((w) => w[0]).join('');
};
