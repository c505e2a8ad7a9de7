import { render } from 'preact';
import 'highlight.js/styles/github.css';
import { setToken, takeToken } from './api.ts';
import { App } from './components/app.tsx';
import './styles.css';

setToken(takeToken());
render(<App />, document.getElementById('app')!);
