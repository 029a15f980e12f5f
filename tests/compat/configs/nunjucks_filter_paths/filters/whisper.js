module.exports = (text) => String(text).toLowerCase() + "...";
