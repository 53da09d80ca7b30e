// Entry point: the app in #app, back to the seat of the page's address when this browser
// holds it (a reload goes straight back to the table, S4).
import "./style.css";
import { App } from "./app";

const root = document.getElementById("app");
if (root === null) throw new Error("no #app element");
const app = new App(root);
app.render();
void app.route();
