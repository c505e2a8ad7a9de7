import type { ShellWord } from './shell-words.ts';

/** What one simple command will run, seen through wrappers, nested shells and program paths. */
export interface CommandAnalysis {
  /** Every spelling of the command a deny pattern must be tried against (wrappers peeled, paths cut). */
  readonly spellings: readonly string[];
  /** Command lines it hands to another shell (`bash -c`, `eval`, `sudo -s`, `env -S`, `trap`). */
  readonly nestedLines: readonly string[];
  /** Commands it runs as argument lists (`find -exec`, `xargs`). */
  readonly nestedWords: readonly (readonly ShellWord[])[];
  /** Why what it runs cannot be known before it runs, when that is so. */
  readonly undecidable?: string;
  /** True when it runs code given as text (a nested shell or `eval`): never allowed by a command rule. */
  readonly opaque: boolean;
}

const shells = new Set(['bash', 'sh', 'zsh', 'dash', 'ksh', 'mksh', 'ash', 'fish', 'busybox']);

/** Options (of each wrapper) that take a separate argument. */
const optionArguments: Record<string, ReadonlySet<string>> = {
  env: new Set(['-u', '--unset', '-C', '--chdir', '-P']),
  nice: new Set(['-n', '--adjustment']),
  timeout: new Set(['-s', '--signal', '-k', '--kill-after']),
  sudo: new Set([
    '-u',
    '--user',
    '-g',
    '--group',
    '-C',
    '--close-from',
    '-D',
    '--chdir',
    '-h',
    '--host',
    '-p',
    '--prompt',
    '-r',
    '--role',
    '-t',
    '--type',
    '-U',
    '--other-user',
    '-T',
    '--command-timeout',
  ]),
  doas: new Set(['-u', '-C']),
  exec: new Set(['-a']),
  time: new Set(['-f', '--format', '-o', '--output']),
  stdbuf: new Set(['-i', '--input', '-o', '--output', '-e', '--error']),
  ionice: new Set(['-c', '--class', '-n', '--classdata']),
  setsid: new Set(),
  nohup: new Set(),
  command: new Set(),
  builtin: new Set(),
  chroot: new Set(['--userspec', '--groups']),
  xargs: new Set([
    '-a',
    '--arg-file',
    '-d',
    '--delimiter',
    '-E',
    '-e',
    '-I',
    '-i',
    '-L',
    '-l',
    '-n',
    '--max-args',
    '-P',
    '--max-procs',
    '-s',
    '--max-chars',
  ]),
};

function basename(program: string): string {
  const slash = program.lastIndexOf('/');
  return slash === -1 ? program : program.slice(slash + 1);
}

function values(words: readonly ShellWord[]): string {
  return words.map((word) => word.value).join(' ');
}

/** The index of the first word after a wrapper's options (and, for some, its leading operand). */
function skipOptions(name: string, words: readonly ShellWord[], start: number): number {
  const takesArgument = optionArguments[name] ?? new Set<string>();
  let index = start;
  while (index < words.length) {
    const word = words[index]!.value;
    if (word === '--') return index + 1;
    if (name === 'env' && /^[A-Za-z_][A-Za-z0-9_]*=/.test(word)) {
      index++;
      continue;
    }
    if (!word.startsWith('-') || word === '-') break;
    if (name === 'nice' && /^-\d+$/.test(word)) {
      index++;
      continue;
    }
    const flag = word.includes('=') ? word.slice(0, word.indexOf('=')) : word;
    index += takesArgument.has(flag) && !word.includes('=') ? 2 : 1;
  }
  // timeout takes a duration, chroot a new root, before the command.
  if ((name === 'timeout' || name === 'chroot') && index < words.length) index++;
  return index;
}

const assignment = /^[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=/;

/**
 * Analyses a simple command's words: peels assignments and wrappers (`env`, `nice`, `timeout`,
 * `nohup`, `sudo`, `doas`, `command`, `builtin`, `exec`, `time`, `stdbuf`, `ionice`, `setsid`,
 * `chroot`, `xargs`), cuts program paths to their name (`/bin/rm`, `./rm` → `rm`), and finds what is
 * handed on to run (`bash -c`, `eval`, `find -exec/-execdir/-ok/-okdir`, `find -delete` as `rm`, `trap`).
 * A computed program name, or a shell reading its commands from standard input, is undecidable.
 */
export function analyseCommand(words: readonly ShellWord[]): CommandAnalysis {
  const spellings: string[] = [];
  const nestedLines: string[] = [];
  const nestedWords: ShellWord[][] = [];
  let undecidable: string | undefined;
  let opaque = false;
  let index = 0;
  for (let guard = 0; guard < 64 && index < words.length; guard++) {
    while (index < words.length && !words[index]!.quoted && assignment.test(words[index]!.raw)) index++;
    if (index >= words.length) break;
    const program = words[index]!;
    if (program.dynamic || program.glob) {
      undecidable = `the program ${program.raw} is only known when the line runs`;
      break;
    }
    const name = basename(program.value);
    const rest = words.slice(index + 1);
    spellings.push(values(words.slice(index)), [name, ...rest.map((word) => word.value)].join(' '));
    if (name === 'command' || name === 'builtin') {
      // `command -v name` only looks the name up.
      if (rest[0]?.value === '-v' || rest[0]?.value === '-V') break;
    }
    if (name === 'ionice' && rest.some((word) => word.value === '-p' || word.value === '-P')) break;
    if (name in optionArguments) {
      const next = skipOptions(name, words, index + 1);
      const options = words.slice(index + 1, next).map((word) => word.value);
      if (name === 'env') {
        const split = options.findIndex((option) => option === '-S' || option.startsWith('--split-string'));
        if (split !== -1) {
          // env -S splits its string into a command line.
          const inline = options[split]!.includes('=')
            ? options[split]!.slice(options[split]!.indexOf('=') + 1)
            : '';
          nestedLines.push([inline, values(words.slice(next))].join(' ').trim());
          opaque = true;
          break;
        }
      }
      if (
        (name === 'sudo' || name === 'doas') &&
        options.some((option) => /^-[a-zA-Z]*[si]/.test(option) && !option.startsWith('--'))
      ) {
        // sudo -s / -i hands the rest to a shell as one command line (or reads stdin without one).
        if (next >= words.length)
          undecidable = `${name} starts a shell that reads its commands from standard input`;
        else nestedLines.push(values(words.slice(next)));
        opaque = true;
        break;
      }
      if (name === 'xargs') {
        const command = words.slice(next);
        nestedWords.push(
          command.length > 0
            ? command
            : [{ raw: 'echo', value: 'echo', dynamic: false, glob: false, quoted: false }],
        );
        break;
      }
      index = next;
      continue;
    }
    if (shells.has(name)) {
      const shell = analyseShell(name, rest);
      if (shell.line !== undefined) nestedLines.push(shell.line);
      if (shell.undecidable !== undefined) undecidable = shell.undecidable;
      opaque = shell.line !== undefined || shell.undecidable !== undefined;
      break;
    }
    if (name === 'eval') {
      opaque = true;
      if (rest.some((word) => word.dynamic))
        undecidable = 'eval runs text that is only known when the line runs';
      else nestedLines.push(values(rest));
      break;
    }
    if (name === 'trap' && rest.length >= 2 && !rest[0]!.value.startsWith('-')) {
      if (rest[0]!.dynamic) undecidable = 'trap runs text that is only known when the line runs';
      else nestedLines.push(rest[0]!.value);
      opaque = true;
      break;
    }
    if (name === 'find') analyseFind(rest, spellings, nestedWords);
    break;
  }
  return {
    spellings,
    nestedLines,
    nestedWords,
    opaque,
    ...(undecidable !== undefined ? { undecidable } : {}),
  };
}

function analyseShell(name: string, rest: readonly ShellWord[]): { line?: string; undecidable?: string } {
  let command = false;
  let index = 0;
  if (name === 'busybox') {
    if (rest[0]?.value !== 'sh' && rest[0]?.value !== 'ash') return {};
    index = 1;
  }
  for (; index < rest.length; index++) {
    const word = rest[index]!.value;
    if (word === '--' || word === '-') {
      index++;
      break;
    }
    if (!word.startsWith('-') && !word.startsWith('+')) break;
    if (/^-[a-zA-Z]*c/.test(word)) command = true;
    if (/^[-+]o$|^[-+]O$|^--(?:rcfile|init-file)$/.test(word)) index++;
  }
  const operand = rest[index];
  if (command) {
    if (operand === undefined) return { undecidable: `${name} -c has no command text` };
    if (operand.dynamic) return { undecidable: `${name} -c runs text that is only known when the line runs` };
    return { line: operand.value };
  }
  if (operand === undefined || rest.some((word) => /^-[a-zA-Z]*s/.test(word.value))) {
    return { undecidable: `${name} reads its commands from standard input` };
  }
  // `bash script.sh`: runs a script file, like any program.
  return {};
}

function analyseFind(rest: readonly ShellWord[], spellings: string[], nestedWords: ShellWord[][]): void {
  const starts: string[] = [];
  for (const word of rest) {
    if (word.value.startsWith('-') || word.value === '(' || word.value === '!') break;
    starts.push(word.value);
  }
  for (let index = 0; index < rest.length; index++) {
    const word = rest[index]!.value;
    if (word === '-delete') spellings.push(['rm', '-rf', ...starts].join(' '));
    if (word === '-exec' || word === '-execdir' || word === '-ok' || word === '-okdir') {
      const command: ShellWord[] = [];
      for (index++; index < rest.length; index++) {
        const part = rest[index]!;
        if (part.value === ';' || part.value === '+') break;
        command.push(part);
      }
      if (command.length > 0) nestedWords.push(command);
    }
  }
}
