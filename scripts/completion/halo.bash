# bash completion for halo: subcommands, each subcommand's options (read from its --help, so
# they never go stale), filter names after -f, preset names after --preset, and files.
_halo() {
  local cur prev sub word
  # Whole arguments from the line: bash splits words at ':' and '=' (COMP_WORDBREAKS), which
  # filter specs are full of.
  local line=${COMP_LINE:0:COMP_POINT}
  cur=${line##*[[:space:]]}
  local before=(${line%"$cur"})
  prev=${before[-1]}
  local halo=${COMP_WORDS[0]}
  for word in "${before[@]:1}"; do
    case $word in
      run | hist | compare | devices | filters | presets | summary | tune) sub=$word; break ;;
    esac
  done
  case $prev in
    -f | --filter)
      # name, then name: and its keys from `halo filters NAME`
      if [[ $cur == *:* ]]; then
        local name=${cur%%:*} part=${cur##*:} prefix=
        # bash replaces only the text after the last ':' or '=' when they break words
        [[ $COMP_WORDBREAKS == *:* ]] || prefix=${cur%:*}:
        if [[ $part == border=* ]]; then
          [[ $COMP_WORDBREAKS == *=* ]] || prefix+=border=
          COMPREPLY=($(compgen -P "$prefix" -W "zero clamp reflect wrap" -- "${part#border=}"))
        elif [[ $part != *=* ]]; then
          local keys
          keys=$("$halo" filters "$name" 2>/dev/null | awk 'NR > 1 && /^  [a-z_]+ / && /default|required/ {print $1 "="}')
          COMPREPLY=($(compgen -P "$prefix" -W "$keys" -- "$part"))
          compopt -o nospace 2>/dev/null
        fi
      else
        COMPREPLY=($(compgen -W "$("$halo" filters 2>/dev/null | awk '/^[a-z]/ {print $1}')" -- "$cur"))
      fi
      return ;;
    --preset)
      COMPREPLY=($(compgen -W "$("$halo" presets 2>/dev/null | awk '{print $1}')" -- "$cur"))
      return ;;
    --device)
      COMPREPLY=($(compgen -W "auto gpu cpu ref all" -- "$cur"))
      return ;;
    --type)
      COMPREPLY=($(compgen -W "u8 u16 half float" -- "$cur"))
      return ;;
    --format)
      COMPREPLY=($(compgen -W "png jpg pfm exr tif hdr bmp tga webp dpx" -- "$cur"))
      return ;;
    --mode)
      COMPREPLY=($(compgen -W "luma luma709 rgb gray channel" -- "$cur"))
      return ;;
    --filters)  # halo tune's kernel families
      COMPREPLY=($(compgen -W "gaussian conv box histogram" -- "$cur"))
      return ;;
  esac
  if [[ -z $sub ]]; then
    if [[ $cur == -* ]]; then
      COMPREPLY=($(compgen -W "$("$halo" --help 2>/dev/null | grep -oE -- '--?[a-zA-Z][-a-zA-Z]*' | sort -u)" -- "$cur"))
    else
      COMPREPLY=($(compgen -W "run hist compare devices filters presets summary tune" -- "$cur"))
    fi
    return
  fi
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$("$halo" "$sub" --help 2>/dev/null | grep -oE -- '(^|[ ,])--?[a-zA-Z][-a-zA-Z]*' | tr -d ' ,' | sort -u)" -- "$cur"))
    return
  fi
  if [[ $sub == filters ]]; then
    COMPREPLY=($(compgen -W "$("$halo" filters 2>/dev/null | awk '/^[a-z]/ {print $1}')" -- "$cur"))
    return
  fi
  COMPREPLY=($(compgen -f -- "$cur"))
  compopt -o filenames
}
complete -F _halo halo
