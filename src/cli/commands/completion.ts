import { ValidationError } from '../../core/errors.js';
import { COMMANDS } from '../flags.js';
import type { CliContext } from '../context.js';

export const COMPLETION_USAGE = `Usage: pictor completion bash|zsh|fish

Prints a script that completes pictor's commands and options in that shell. For the current shell:

  bash   source <(pictor completion bash)
  zsh    source <(pictor completion zsh)
  fish   pictor completion fish | source

To keep it, add that line to ~/.bashrc, ~/.zshrc or ~/.config/fish/config.fish. In this repository use
"npm run -s pictor -- completion bash" in place of "pictor completion bash".`;

const SHELLS = ['bash', 'zsh', 'fish'] as const;
type Shell = (typeof SHELLS)[number];

/** Each command's options as `--name`, from the same definitions the parser uses. */
function optionsOf(flags: Readonly<Record<string, unknown>>): string[] {
  return Object.keys(flags).map((name) => `--${name}`);
}

/** `pictor completion bash|zsh|fish`: the completion script for that shell, on stdout. */
export function runCompletion(args: string[], ctx: CliContext): number {
  const [shell, ...rest] = args;
  if (shell === '--help' || shell === '-h') {
    ctx.stdout(COMPLETION_USAGE);
    return 0;
  }
  if (!SHELLS.includes(shell as Shell) || rest.length > 0) {
    throw new ValidationError('shell', `pictor completion takes one shell: ${SHELLS.join(', ')}${shell ? `, not ${JSON.stringify([shell, ...rest].join(' '))}` : ''}`);
  }
  ctx.stdout(completionScript(shell as Shell));
  return 0;
}

export function completionScript(shell: Shell): string {
  const commands = Object.entries(COMMANDS);
  const names = commands.map(([name]) => name).join(' ');
  switch (shell) {
    case 'bash':
      return [
        '# pictor completion for bash: source <(pictor completion bash)',
        '_pictor() {',
        '  local cur="${COMP_WORDS[COMP_CWORD]}"',
        '  if [ "$COMP_CWORD" -eq 1 ]; then',
        `    COMPREPLY=( $(compgen -W "${names} --help --version" -- "$cur") )`,
        '    return',
        '  fi',
        '  case "${COMP_WORDS[1]}" in',
        ...commands.map(([name, c]) =>
          name === 'completion'
            ? `    completion) COMPREPLY=( $(compgen -W "bash zsh fish" -- "$cur") ) ;;`
            : `    ${name}) [[ "$cur" == -* ]] && COMPREPLY=( $(compgen -W "${optionsOf(c.flags).join(' ')}" -- "$cur") ) ;;`,
        ),
        '  esac',
        '}',
        'complete -o default -F _pictor pictor',
      ].join('\n');
    case 'zsh':
      return [
        '#compdef pictor',
        '# pictor completion for zsh: source <(pictor completion zsh)',
        '_pictor() {',
        '  if (( CURRENT == 2 )); then',
        `    local -a commands=(${commands.map(([name, c]) => `'${name}:${c.summary.replace(/'/g, '')}'`).join(' ')})`,
        "    _describe 'command' commands",
        '    return',
        '  fi',
        '  case "${words[2]}" in',
        ...commands.map(([name, c]) =>
          name === 'completion'
            ? '    completion) compadd bash zsh fish ;;'
            : `    ${name}) if [[ "\${words[CURRENT]}" == -* ]]; then compadd -- ${optionsOf(c.flags).join(' ')}; else _files; fi ;;`,
        ),
        '  esac',
        '}',
        'if (( $+functions[compdef] )); then compdef _pictor pictor; fi',
      ].join('\n');
    case 'fish':
      return [
        '# pictor completion for fish: pictor completion fish | source',
        'complete -c pictor -e',
        ...commands.map(([name, c]) => `complete -c pictor -n __fish_use_subcommand -f -a ${name} -d '${c.summary.replace(/'/g, '')}'`),
        ...commands.flatMap(([name, c]) =>
          name === 'completion'
            ? ['complete -c pictor -n "__fish_seen_subcommand_from completion" -f -a "bash zsh fish"']
            : Object.entries(c.flags).map(
                ([flag, definition]) =>
                  `complete -c pictor -n "__fish_seen_subcommand_from ${name}" -l ${flag}${(definition as { type: string }).type === 'string' ? ' -r' : ''}`,
              ),
        ),
      ].join('\n');
  }
}
