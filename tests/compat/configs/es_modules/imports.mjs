// The sandbox loads no modules: the import fails here, the file read fails in promptfoo.
import { readFileSync } from "node:fs";
export default () => readFileSync("x").length > 0;
