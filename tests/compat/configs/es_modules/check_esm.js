const threshold = 2;
export function longEnough(output) {
  return output.split(" ").length > threshold;
}
