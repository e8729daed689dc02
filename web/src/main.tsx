import { render } from 'preact';

function App() {
  return <main>Agentry</main>;
}

const root = document.getElementById('app');
if (root !== null) render(<App />, root);
